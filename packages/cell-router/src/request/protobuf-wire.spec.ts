import {
  appendToNested,
  encodeVarint,
  fieldSpans,
  findField,
  int32At,
  lengthDelimited,
  nestedField,
} from './protobuf-wire.ts';
import { ProtobufWireError } from '../errors.ts';

describe('protobuf wire', () => {
  it('encodes varints past 2^31 and 2^53 - 1 without truncation', () => {
    expect([...encodeVarint(300)]).toEqual([0xac, 0x02]);
    expect([...encodeVarint(2 ** 32)]).toEqual([0x80, 0x80, 0x80, 0x80, 0x10]);
    // A varint field holding 2^32 is skipped correctly, so the string after it is found.
    const message = Buffer.concat([
      encodeVarint(7 * 8),
      encodeVarint(2 ** 32),
      lengthDelimited(3, Buffer.from('x')),
    ]);
    expect(nestedField(message, [3])?.toString()).toBe('x');
  });

  it('grows every enclosing length when a nested message crosses 127 bytes', () => {
    const inner = lengthDelimited(1, Buffer.alloc(120, 0x61));
    const outer = Buffer.concat([lengthDelimited(5, Buffer.from('before')), lengthDelimited(2, inner)]);
    const grown = appendToNested(outer, [2], lengthDelimited(9, Buffer.alloc(20, 0x62)));
    // The length of field 2 now needs two varint bytes.
    expect(grown.length).toBe(outer.length + 22 + 1);
    expect(nestedField(grown, [5])?.toString()).toBe('before');
    expect(nestedField(grown, [2, 1])?.length).toBe(120);
    expect(nestedField(grown, [2, 9])?.toString()).toBe('b'.repeat(20));
  });

  it('finds the last occurrence of a field, as decoders let it win', () => {
    const message = Buffer.concat([
      lengthDelimited(1, Buffer.from('')),
      lengthDelimited(1, Buffer.from('b')),
    ]);
    expect(message.subarray(findField(message, 1)!.start, findField(message, 1)!.end).toString()).toBe('b');
  });

  it('refuses truncated and unknown wire types', () => {
    expect(() => findField(Buffer.from([0x0a, 0x05, 0x61]), 1)).toThrow(ProtobufWireError);
    expect(() => findField(Buffer.from([0x0b]), 1)).toThrow('wire type 3');
    expect(() => appendToNested(Buffer.alloc(0), [4], Buffer.alloc(0))).toThrow('no field 4');
  });

  it('refuses a field number Go would read as another field, or refuse', () => {
    // Field 2^32 + 2: Go's int32(tag >> 3) makes it field 2; the router must not read it as an unknown field.
    const wrapped = Buffer.concat([encodeVarint((2 ** 32 + 2) * 8 + 2), encodeVarint(1), Buffer.from('x')]);
    expect(() => fieldSpans(wrapped)).toThrow('field number out of range');
    expect(() => findField(wrapped, 2)).toThrow('field number out of range');
    // Field 0, and 2^31 (a negative int32), are errors to Go.
    expect(() => fieldSpans(Buffer.from([0x02, 0x00]))).toThrow('field number out of range');
    expect(() => fieldSpans(Buffer.concat([encodeVarint(2 ** 31 * 8), encodeVarint(1)]))).toThrow(
      'field number out of range',
    );
    // The largest field number is read as itself.
    const largest = Buffer.concat([encodeVarint((2 ** 29 - 1) * 8 + 2), encodeVarint(0)]);
    expect(fieldSpans(largest)[0]?.number).toBe(2 ** 29 - 1);
  });

  it('reads an int32 as Go does: its low 32 bits, signed', () => {
    expect(int32At(encodeVarint(30080), 0)).toBe(30080);
    expect(int32At(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), 0)).toBe(-1);
    expect(int32At(encodeVarint(2 ** 32 + 7), 0)).toBe(7);
  });
});
