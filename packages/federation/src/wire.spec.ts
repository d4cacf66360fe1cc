import { METADATA, METADATA_LIST, PROTOBUF, PROTOBUF_WATCH_STREAM } from './wire.ts';

/** The parameters of a media type, as an apiserver's content negotiation reads them. */
const parameters = (mediaType: string) =>
  Object.fromEntries(
    mediaType
      .split(';')
      .slice(1)
      .map((parameter) => parameter.split('=') as [string, string]),
  );

describe('wire constants', () => {
  it('ask for metadata only as the meta.k8s.io/v1 kinds the apiserver converts to', () => {
    expect(parameters(METADATA)).toEqual({ as: 'PartialObjectMetadata', g: 'meta.k8s.io', v: 'v1' });
    expect(parameters(METADATA_LIST)).toEqual({ as: 'PartialObjectMetadataList', g: 'meta.k8s.io', v: 'v1' });
    expect(METADATA.split(';')[0]).toBe('application/json');
  });

  it('name the protobuf watch stream as the protobuf type with stream=watch', () => {
    expect(PROTOBUF_WATCH_STREAM.startsWith(`${PROTOBUF};`)).toBe(true);
    expect(parameters(PROTOBUF_WATCH_STREAM)).toEqual({ stream: 'watch' });
  });
});
