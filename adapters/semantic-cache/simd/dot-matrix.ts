import { DOTS_WASM } from './dots.wasm.ts';

const module = new WebAssembly.Module(Buffer.from(DOTS_WASM, 'base64'));
const PAGE = 65_536;

interface DotsExports {
  memory: WebAssembly.Memory;
  dots(matrix: number, query: number, rows: number, out: number, n: number, d: number): void;
}

/**
 * A row-major f32 matrix living in its own WebAssembly memory, with a SIMD kernel computing the
 * dot products of chosen rows against a query (`dots.wat`): four lanes at a time, no copy of
 * the matrix per lookup. With pre-normalised rows and query, the products are cosine similarities.
 */
export class DotMatrix {
  private readonly exports: DotsExports;
  private readonly matrix: Float32Array;
  private readonly query: Float32Array;
  private readonly rowIndex: Int32Array;
  private readonly out: Float32Array;
  private readonly offsets: { query: number; rows: number; out: number };

  readonly capacity: number;
  readonly dimensions: number;

  constructor(
    capacity: number,
    dimensions: number,
  ) {
    this.capacity = capacity;
    this.dimensions = dimensions;
    if (dimensions % 8 !== 0) throw new Error('DotMatrix needs a dimension that is a multiple of 8');
    const matrixBytes = capacity * dimensions * 4;
    this.offsets = { query: matrixBytes, rows: matrixBytes + dimensions * 4, out: matrixBytes + dimensions * 4 + capacity * 4 };
    const total = this.offsets.out + capacity * 4;
    this.exports = new WebAssembly.Instance(module).exports as unknown as DotsExports;
    const pages = Math.ceil(total / PAGE);
    if (pages > 1) this.exports.memory.grow(pages - 1);
    // Views only after growing: a grow detaches the buffer.
    const buffer = this.exports.memory.buffer;
    this.matrix = new Float32Array(buffer, 0, capacity * dimensions);
    this.query = new Float32Array(buffer, this.offsets.query, dimensions);
    this.rowIndex = new Int32Array(buffer, this.offsets.rows, capacity);
    this.out = new Float32Array(buffer, this.offsets.out, capacity);
  }

  setRow(row: number, vector: Float32Array): void {
    this.matrix.set(vector, row * this.dimensions);
  }

  /** out[k] = row rows[k] · query; the returned view is overwritten by the next call. */
  dots(query: Float32Array, rows: readonly number[]): Float32Array {
    this.query.set(query);
    for (let k = 0; k < rows.length; k++) this.rowIndex[k] = rows[k]!;
    this.exports.dots(0, this.offsets.query, this.offsets.rows, this.offsets.out, rows.length, this.dimensions);
    return this.out.subarray(0, rows.length);
  }
}
