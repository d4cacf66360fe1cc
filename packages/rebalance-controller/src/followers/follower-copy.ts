import { FOLLOWED_VERSION_ANNOTATION, FOLLOWER_LABEL, MIRROR_HASH_ANNOTATION } from '@cellfed/api';
import { CONTROL_PLANE } from '@cellfed/controller-kit';
import { type KubeObject } from '@cellfed/federation';

import { contentHash } from '../mirror-marks.ts';

/** Where a follower copy's source lives: a cell id, or `control-plane`. */
export type SourceId = string;

/**
 * The follower copy of a ConfigMap or Secret for a cell: its content (data, type, immutability, the user's
 * labels and annotations) without what the source's apiserver keeps (uid, versions, owners, managed fields)
 * and without cellfed's own marks (a `migrating` label would fence the copy too), labelled with where it
 * follows from and annotated with a hash of that content.
 */
export function followerCopy(source: KubeObject, from: SourceId): KubeObject {
  const { name, namespace, labels, annotations } = source.metadata;
  const body = source as KubeObject & Record<string, unknown>;
  const content = {
    apiVersion: 'v1',
    kind: source.kind,
    metadata: { name, namespace, labels: userMarks(labels), annotations: userMarks(annotations) },
    ...pick(body, ['data', 'binaryData', 'stringData', 'type', 'immutable']),
  };
  const version = source.metadata.resourceVersion;
  return {
    ...content,
    metadata: {
      ...content.metadata,
      labels: { ...content.metadata.labels, [FOLLOWER_LABEL]: from },
      annotations: {
        ...content.metadata.annotations,
        [MIRROR_HASH_ANNOTATION]: contentHash(content),
        ...(from !== CONTROL_PLANE && version ? { [FOLLOWED_VERSION_ANNOTATION]: version } : {}),
      },
    },
  } as KubeObject;
}

/** Whether `current` (a follower in the cell) already holds what `wanted` carries, from the same source. */
export function sameFollower(current: KubeObject, wanted: KubeObject): boolean {
  const mark = (object: KubeObject) =>
    `${object.metadata.labels?.[FOLLOWER_LABEL]}:${object.metadata.annotations?.[MIRROR_HASH_ANNOTATION]}`;
  return mark(current) === mark(wanted);
}

/** Labels or annotations without cellfed's own (`cellfed.io/…`): a copy must not carry another object's marks. */
export function userMarks(marks: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(marks ?? {}).filter(([key]) => !key.startsWith('cellfed.io/')));
}

function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => object[key] !== undefined).map((key) => [key, object[key]]));
}
