import { FOLLOWER_LABEL, MIRROR_HASH_ANNOTATION } from '@cellfed/api';
import { CONTROL_PLANE } from '@cellfed/controller-kit';
import { type KubeObject } from '@cellfed/federation';

import { userMarks } from '../followers/follower-copy.ts';
import { contentHash } from '../mirror-marks.ts';

export const AUTOSCALERS = {
  group: 'autoscaling',
  version: 'v2',
  resource: 'horizontalpodautoscalers',
  namespaced: true,
};

interface ScaleTargetRef {
  apiVersion?: string;
  kind: string;
  name: string;
}

export interface HorizontalPodAutoscaler extends KubeObject {
  spec?: { scaleTargetRef?: ScaleTargetRef } & Record<string, unknown>;
  status?: { observedGeneration?: number } & Record<string, unknown>;
}

/**
 * The copy of a control-plane HorizontalPodAutoscaler for its target's cell: its spec, the user's labels and
 * annotations, labelled as following the control plane and annotated with a hash of that content, which
 * says whether a copy in a cell is of this version.
 */
export function autoscalerCopy(autoscaler: HorizontalPodAutoscaler): HorizontalPodAutoscaler {
  const { name, namespace, labels, annotations } = autoscaler.metadata;
  const content = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace, labels: userMarks(labels), annotations: userMarks(annotations) },
    spec: autoscaler.spec,
  };
  return {
    ...content,
    metadata: {
      ...content.metadata,
      labels: { ...content.metadata.labels, [FOLLOWER_LABEL]: CONTROL_PLANE },
      annotations: { ...content.metadata.annotations, [MIRROR_HASH_ANNOTATION]: contentHash(content) },
    },
  };
}

/**
 * The status the control-plane autoscaler shows: what its target's cell computed for the copy, once that
 * copy is of this version of the autoscaler. Where the cell's autoscaler says which generation it looked at
 * (`observedGeneration`), the status waits for the copy's current one and then shows the control-plane
 * object's, as one apiserver would.
 */
export function shownStatus(
  autoscaler: HorizontalPodAutoscaler,
  copy: HorizontalPodAutoscaler | undefined,
): HorizontalPodAutoscaler['status'] | undefined {
  const wanted = autoscalerCopy(autoscaler).metadata.annotations?.[MIRROR_HASH_ANNOTATION];
  if (!copy?.status || copy.metadata.annotations?.[MIRROR_HASH_ANNOTATION] !== wanted) return undefined;
  const observed = copy.status.observedGeneration;
  if (observed === undefined) return copy.status;
  if (observed !== copy.metadata.generation) return undefined;
  const generation = autoscaler.metadata.generation;
  return { ...copy.status, ...(generation === undefined ? {} : { observedGeneration: generation }) };
}
