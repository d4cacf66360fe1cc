import { ProtobufWireError } from '../errors.ts';

/**
 * Just enough of the protobuf wire format to find and rewrite nested length-delimited fields of a
 * Kubernetes protobuf body without its schema. Arithmetic, not bitwise operators, so values past 2^31 stay
 * whole.
 */

/** Where a length-delimited field sits in its message. */
export interface FieldSpan {
  /** Offset of the tag. */
  readonly tagStart: number;
  /** Offset of the field's bytes (after the length). */
  readonly start: number;
  readonly end: number;
}

/**
 * The last length-delimited occurrence of field `number` (protobuf decoders let the last one win, and
 * client-go writes empty strings, so a name appended after an empty one is the name).
 */
export function findField(message: Uint8Array, number: number): FieldSpan | undefined {
  let found: FieldSpan | undefined;
  let offset = 0;
  while (offset < message.length) {
    const tagStart = offset;
    const [tag, afterTag] = readTag(message, offset);
    const wireType = tag % 8;
    offset = afterTag;
    switch (wireType) {
      case 0:
        offset = readVarint(message, offset)[1];
        break;
      case 1:
        offset += 8;
        break;
      case 2: {
        const [length, start] = readVarint(message, offset);
        const end = start + length;
        if (end > message.length) throw new ProtobufWireError('the protobuf body is truncated');
        if (Math.floor(tag / 8) === number) found = { tagStart, start, end };
        offset = end;
        break;
      }
      case 5:
        offset += 4;
        break;
      default:
        throw new ProtobufWireError(`the protobuf body has an unsupported wire type ${wireType}`);
    }
  }
  if (offset > message.length) throw new ProtobufWireError('the protobuf body is truncated');
  return found;
}

/** One field of a message, wherever it is and whatever its wire type. */
export interface AnyFieldSpan extends FieldSpan {
  readonly number: number;
  readonly wireType: number;
}

/** Every field of `message`, in order (repeated fields once per occurrence). */
export function fieldSpans(message: Uint8Array): AnyFieldSpan[] {
  const spans: AnyFieldSpan[] = [];
  let offset = 0;
  while (offset < message.length) {
    const tagStart = offset;
    const [tag, afterTag] = readTag(message, offset);
    const wireType = tag % 8;
    let start = afterTag;
    let end: number;
    switch (wireType) {
      case 0:
        end = readVarint(message, afterTag)[1];
        break;
      case 1:
        end = afterTag + 8;
        break;
      case 2: {
        const [length, after] = readVarint(message, afterTag);
        start = after;
        end = after + length;
        break;
      }
      case 5:
        end = afterTag + 4;
        break;
      default:
        throw new ProtobufWireError(`the protobuf body has an unsupported wire type ${wireType}`);
    }
    if (end > message.length) throw new ProtobufWireError('the protobuf body is truncated');
    spans.push({ number: Math.floor(tag / 8), wireType, tagStart, start, end });
    offset = end;
  }
  return spans;
}

/** The value of a varint field (wire type 0) whose bytes start at `start`. */
export function varintAt(message: Uint8Array, start: number): number {
  return readVarint(message, start)[0];
}

/**
 * A varint field read as Go reads an int32: its low 32 bits, signed, however long it is on the wire (a
 * negative int32 takes ten bytes; only the first five reach the low 32 bits, so the value stays exact).
 */
export function int32At(message: Uint8Array, start: number): number {
  let value = 0;
  let scale = 1;
  for (let i = start; i < start + 5 && i < message.length; i++) {
    const byte = message[i]!;
    value += (byte % 128) * scale;
    if (byte < 128) break;
    scale *= 128;
  }
  const low = value % 2 ** 32;
  return low >= 2 ** 31 ? low - 2 ** 32 : low;
}

/** Field `number` with wire type 0 (an integer or a bool). */
export function varintField(number: number, value: number): Buffer {
  return Buffer.concat([encodeVarint(number * 8), encodeVarint(value)]);
}

/** The bytes of the field at the end of `path` (field numbers from the outside in). */
export function nestedField(message: Buffer, path: readonly number[]): Buffer | undefined {
  let current = message;
  for (const number of path) {
    const span = findField(current, number);
    if (!span) return undefined;
    current = current.subarray(span.start, span.end);
  }
  return current;
}

/**
 * A copy of `message` with `suffix` appended to the message at `path`, every enclosing length rewritten.
 * Throws if a message on the path is missing.
 */
export function appendToNested(message: Buffer, path: readonly number[], suffix: Buffer): Buffer {
  if (path.length === 0) return Buffer.concat([message, suffix]);
  const [number, ...rest] = path as [number, ...number[]];
  const span = findField(message, number);
  if (!span) throw new ProtobufWireError(`the protobuf message has no field ${number}`);
  const inner = appendToNested(message.subarray(span.start, span.end), rest, suffix);
  return Buffer.concat([
    message.subarray(0, span.tagStart),
    lengthDelimited(number, inner),
    message.subarray(span.end),
  ]);
}

/** The last length-delimited field `number` of a message as text; undefined when absent. */
/** The last occurrence of field `number`, of any wire type (a decoder lets the last one win). */
export function lastSpan(message: Buffer, number: number): AnyFieldSpan | undefined {
  return fieldSpans(message).findLast((span) => span.number === number);
}

/** `message` with `field` (a whole field, tag and all) where `span` was. */
export function replaceSpan(message: Buffer, span: AnyFieldSpan, field: Buffer): Buffer {
  return Buffer.concat([message.subarray(0, span.tagStart), field, message.subarray(span.end)]);
}

export function stringField(message: Buffer, number: number): string | undefined {
  const span = findField(message, number);
  return span ? message.subarray(span.start, span.end).toString('utf8') : undefined;
}

/** Field `number` with wire type 2 (bytes, string or message). */
export function lengthDelimited(number: number, bytes: Buffer): Buffer {
  return Buffer.concat([encodeVarint(number * 8 + 2), encodeVarint(bytes.length), bytes]);
}

export function encodeVarint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/**
 * A field's tag. Go's decoders take the field number as `int32(tag >> 3)`, so a longer tag wraps to another
 * field than it says; a tag of more than five bytes, or a field number of 0 or past 2^31 (an error to Go), is
 * refused rather than read another way than the apiserver reads it.
 */
function readTag(buffer: Uint8Array, offset: number): [tag: number, next: number] {
  const [tag, next] = readVarint(buffer, offset);
  if (next - offset > 5 || tag >= 2 ** 34 || tag < 8)
    throw new ProtobufWireError('the protobuf body has a field number out of range');
  return [tag, next];
}

function readVarint(buffer: Uint8Array, offset: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = offset; i < buffer.length && i < offset + 10; i++) {
    const byte = buffer[i]!;
    value += (byte % 128) * scale;
    if (byte < 128) return [value, i + 1];
    scale *= 128;
  }
  throw new ProtobufWireError('the protobuf body is truncated');
}
