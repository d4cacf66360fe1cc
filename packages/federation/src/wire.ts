/**
 * What cellfed's parts say on the wire to apiservers and clients, each written once: the content types of
 * the four patch kinds, the media types of metadata-only and protobuf answers, and the prefix of the
 * composite resourceVersions the router hands out for merged lists and watches.
 */

/** Server-side apply. */
export const APPLY_PATCH = 'application/apply-patch+yaml';
/** JSON merge patch (RFC 7386). */
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
/** JSON patch (RFC 6902). */
export const JSON_PATCH = 'application/json-patch+json';

/** The Accept header for one object's metadata only (meta.k8s.io/v1 PartialObjectMetadata). */
export const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
/** The Accept header for a list of metadata only (meta.k8s.io/v1 PartialObjectMetadataList). */
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** Kubernetes' protobuf encoding (the `k8s\0` envelope). */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** A watch stream of protobuf events, each length-prefixed. */
export const PROTOBUF_WATCH_STREAM = `${PROTOBUF};stream=watch`;

/**
 * The first characters of a composite resourceVersion (one version per cell, for a merged list or watch):
 * what tells it from an apiserver's decimal one. The `1` is the format's version.
 */
export const COMPOSITE_VERSION_PREFIX = 'cf1.';
