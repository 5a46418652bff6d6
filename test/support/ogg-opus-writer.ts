import { oggCrc } from '../../machines/voice/ogg-opus.ts';

/**
 * Ogg Opus (RFC 7845) written from raw packets, as a speech service returning `response_format: "opus"`
 * does: an OpusHead page, an OpusTags page, then the audio, `packetsPerPage` packets a page.
 */
export function oggOpusStream(packets: Uint8Array[], options: { inputSampleRate: number; packetSamples48k?: number; packetsPerPage?: number; serial?: number }): Uint8Array {
  const serial = options.serial ?? 0x6b6f6861;
  const perPage = options.packetsPerPage ?? 10;
  const step = options.packetSamples48k ?? 960;
  const head = new Uint8Array(19);
  head.set(ascii('OpusHead'));
  const view = new DataView(head.buffer);
  head[8] = 1;
  head[9] = 1;
  view.setUint16(10, 312, true);
  view.setUint32(12, options.inputSampleRate, true);
  const tags = new Uint8Array([...ascii('OpusTags'), 4, 0, 0, 0, ...ascii('test'), 0, 0, 0, 0]);
  const pages: Uint8Array[] = [oggPage([head], { serial, sequence: 0, granule: 0, flags: 2 }), oggPage([tags], { serial, sequence: 1, granule: 0, flags: 0 })];
  let granule = 0;
  for (let at = 0, sequence = 2; at < packets.length; at += perPage, sequence++) {
    const group = packets.slice(at, at + perPage);
    granule += group.length * step;
    pages.push(oggPage(group, { serial, sequence, granule, flags: at + perPage >= packets.length ? 4 : 0 }));
  }
  return new Uint8Array(Buffer.concat(pages));
}

/** One Ogg page holding whole packets (each under 255 × 255 bytes; at most 255 lacing values in all). */
export function oggPage(packets: Uint8Array[], o: { serial: number; sequence: number; granule: number; flags: number }): Uint8Array {
  const lacing: number[] = [];
  for (const packet of packets) {
    let left = packet.length;
    while (left >= 255) {
      lacing.push(255);
      left -= 255;
    }
    lacing.push(left);
  }
  const body = packets.reduce((n, p) => n + p.length, 0);
  const page = new Uint8Array(27 + lacing.length + body);
  const view = new DataView(page.buffer);
  page.set(ascii('OggS'));
  page[5] = o.flags;
  view.setBigUint64(6, BigInt(o.granule), true);
  view.setUint32(14, o.serial, true);
  view.setUint32(18, o.sequence, true);
  page[26] = lacing.length;
  page.set(lacing, 27);
  let at = 27 + lacing.length;
  for (const packet of packets) {
    page.set(packet, at);
    at += packet.length;
  }
  view.setUint32(22, oggCrc(page), true);
  return page;
}

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}
