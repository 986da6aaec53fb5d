// What a forwarded origin may be: the scheme of a web page and a host with an optional
// port. Anything else (`javascript:`, a path, a user part, spaces) is no origin, whoever
// sent it (docs/tools.md, "The app as an agent").

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_AND_PORT = new RegExp(
  `^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?$`,
);

/** True for `example.com`, `example.com:8080`, `127.0.0.1:3000`, `[::1]:8080`. */
export function isHostAndPort(value: string): boolean {
  const match = HOST_AND_PORT.exec(value);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65_535);
}

export function isWebProtocol(value: string): value is 'http' | 'https' {
  return value === 'http' || value === 'https';
}
