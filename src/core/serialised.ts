/**
 * One operation at a time per key in this process (a file's path: read, change, write back),
 * in the order they were asked for; a failed one does not stop the next.
 */
const queues = new Map<string, Promise<void>>();

export function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const run = (queues.get(key) ?? Promise.resolve()).then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}
