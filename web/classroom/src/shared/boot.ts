/** Reads the JSON the server puts in <script id="lectern-boot">. */
export function readBoot<T>(): T {
  const el = document.getElementById('lectern-boot');
  if (!el?.textContent) throw new Error('lectern-boot missing');
  return JSON.parse(el.textContent) as T;
}
