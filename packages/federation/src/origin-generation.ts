/*
 * Which kinds' copies carry the generation clients knew beside their own (the ORIGIN_GENERATION_ANNOTATION a
 * move or a promotion writes), read by the router's views and the controllers' copies alike.
 */

/**
 * Whether a copy of `resource` is shown by the generation clients knew (see ORIGIN_GENERATION_ANNOTATION): a
 * built-in kind's, whose status the cells' own controllers write. Not a custom resource's: operators write
 * its status through the router, and an `observedGeneration` they write would need translating back.
 */
export function showsOriginGeneration(resource: { group: string }): boolean {
  const { group } = resource;
  return !group.includes('.') || group.endsWith('.k8s.io');
}

/** Whether an apiserver counts an object's annotation changes as a new generation (a Deployment's do). */
export function annotationsBumpGeneration(resource: { group: string; resource: string }): boolean {
  return resource.group === 'apps' && resource.resource === 'deployments';
}
