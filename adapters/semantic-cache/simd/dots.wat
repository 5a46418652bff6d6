;; Dot products of chosen rows of a row-major f32 matrix with one query vector, in WebAssembly SIMD.
;; out[k] = sum_i matrix[rows[k] * d + i] * query[i]   for k in [0, n); d must be a multiple of 8.
;; All arguments are byte offsets into this module's memory, except n and d (counts).
(module
  (memory (export "memory") 1)
  (func (export "dots") (param $matrix i32) (param $query i32) (param $rows i32) (param $out i32) (param $n i32) (param $d i32)
    (local $k i32) (local $row i32) (local $i i32) (local $bytes i32) (local $a v128) (local $b v128)
    (local.set $bytes (i32.shl (local.get $d) (i32.const 2)))
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $row
          (i32.add (local.get $matrix)
            (i32.mul (i32.load (i32.add (local.get $rows) (i32.shl (local.get $k) (i32.const 2)))) (local.get $bytes))))
        (local.set $a (v128.const f32x4 0 0 0 0))
        (local.set $b (v128.const f32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $row_done
          (loop $each_lane
            (br_if $row_done (i32.ge_u (local.get $i) (local.get $bytes)))
            (local.set $a (f32x4.add (local.get $a)
              (f32x4.mul (v128.load (i32.add (local.get $row) (local.get $i))) (v128.load (i32.add (local.get $query) (local.get $i))))))
            (local.set $b (f32x4.add (local.get $b)
              (f32x4.mul (v128.load offset=16 (i32.add (local.get $row) (local.get $i))) (v128.load offset=16 (i32.add (local.get $query) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 32)))
            (br $each_lane)))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
            (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $each_row)))))
