/**
 * Every Redis key, pub/sub channel and queue of an installation starts with its prefix,
 * so two installations (or two test runs) on one Redis never see each other.
 */
export function inNamespace(prefix: string, name: string): string {
  const head = `${prefix}:`;
  return name.startsWith(head) ? name : head + name;
}
