import { ControllerKitErrorCode } from '../errors.ts';
import { watchEvents } from './watch-lines.ts';

async function collect(chunks: string[]) {
  async function* source() {
    for (const chunk of chunks) yield Buffer.from(chunk);
  }
  const events = [];
  for await (const event of watchEvents(source())) events.push(event);
  return events;
}

describe('watchEvents', () => {
  it('decodes events cut anywhere across chunks, including inside a multi-byte character', async () => {
    const line1 = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'café' } } });
    const line2 = JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } });
    const text = `${line1}\n${line2}\n`;
    const bytes = Buffer.from(text);
    const cut = bytes.indexOf(Buffer.from('é')) + 1;
    async function* source() {
      yield bytes.subarray(0, cut);
      yield bytes.subarray(cut, cut + 5);
      yield bytes.subarray(cut + 5);
    }
    const events = [];
    for await (const event of watchEvents(source())) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect((events[0]!.object as { metadata: { name: string } }).metadata.name).toBe('café');
  });

  it('decodes a last line without a newline and skips blank lines', async () => {
    const events = await collect(['\n', '{"type":"DELETED","object":{}}']);
    expect(events).toEqual([{ type: 'DELETED', object: {} }]);
  });

  it('fails on a line that is not a watch event instead of skipping it', async () => {
    await expect(collect(['{"type":"ADDED","object":{}}\nnot json\n'])).rejects.toMatchObject({
      code: ControllerKitErrorCode.WatchDecode,
    });
    await expect(collect(['{"kind":"Status"}\n'])).rejects.toMatchObject({
      code: ControllerKitErrorCode.WatchDecode,
    });
  });
});
