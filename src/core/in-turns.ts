/**
 * Works through `items` with at most `atOnce` of them in progress: each of `atOnce` workers takes
 * the next item when its last one settled, until none are left or `until()` says stop. A
 * supervisor starts and stops its servers so: 10,000 handshakes (or DELETEs) begun together wait
 * in their origins' queues with their timeouts running, instead of taking turns on the sockets.
 */
export async function inTurns<T>(
  items: readonly T[],
  atOnce: number,
  each: (item: T) => unknown,
  until: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !until()) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker));
}
