/** Runs `tasks`, at most `parallelism` at a time; rejects with the first failure. */
export async function inParallel(
  tasks: readonly (() => Promise<unknown>)[],
  parallelism: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, tasks.length) }, worker));
}
