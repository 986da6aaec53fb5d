import { readFileSync } from 'node:fs';
import { CHANNEL_PROVIDERS, GatewayError, type RoutedChannel } from '@switchyard/contracts';
import { type ForwardedFrontApi, type FrontRoute, type RequestLine } from './front-api.js';
import { FORWARDED_APIS } from './registry.js';

// docs/providers.md, "Front APIs and providers", says which provider's channels serve which
// API in front. This spec reads that table and holds it to the registry and to what each
// API's `call` does with a channel of each provider, so the page cannot drift from the code:
// every forwarded route has one row, every provider one column, and a cell says "passed
// over" exactly when the API refuses that provider's channel, "counted by the edge" when it
// answers without asking it, and "as sent" on an openai channel when the client's body goes
// to OpenAI's own route.

const DOC = new URL('../../../../docs/providers.md', import.meta.url);
const CELLS = [
  'as sent',
  'converted',
  'passed over',
  'counted by the edge',
  'as sent, on the deployment',
] as const;

interface Row {
  names: string[];
  cells: Map<string, string>;
}

function table(): { providers: string[]; rows: Row[] } {
  const text = readFileSync(DOC, 'utf8');
  const section = text.split('\n## Front APIs and providers\n')[1]!.split('\n## ')[0]!;
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const split = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
  const header = split(lines[0]!);
  const providers = header.slice(1).map((cell) => cell.replaceAll('`', ''));
  const rows = lines.slice(2).map((line) => {
    const [first, ...cells] = split(line);
    return {
      names: [...first!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
      cells: new Map(cells.map((cell, i) => [providers[i]!, cell])),
    };
  });
  return { providers, rows };
}

/** Whether a name in the table's first column is this route: its path, or `:method` of Gemini's. */
function names(name: string, route: FrontRoute): boolean {
  return name.startsWith(':') ? route.path.endsWith(`:${name}`) : route.path === name;
}

function rowOf(rows: Row[], api: ForwardedFrontApi): Row[] {
  return rows.filter((row) =>
    row.names.some((name) => api.routes.some((route) => names(name, route))),
  );
}

/** A request each API accepts, and the request line it came with. */
async function sample(api: ForwardedFrontApi): Promise<{ raw: unknown; line: RequestLine }> {
  const route = api.routes[0]!;
  const gemini = route.path.includes('::');
  const line = (headers = {}): RequestLine => ({
    url: gemini ? route.path.replace(':model:', 'm') : route.path,
    params: gemini ? { model: 'm' } : {},
    query: {},
    headers,
  });
  if (route.bodyLimit) {
    const form = new FormData();
    form.append('model', 'm');
    form.set('file', new Blob([Buffer.from('audio')], { type: 'audio/mpeg' }), 'a.mp3');
    const request = new Request('http://x/', { method: 'POST', body: form });
    return {
      raw: Buffer.from(await request.arrayBuffer()),
      line: line({ 'content-type': request.headers.get('content-type')! }),
    };
  }
  const messages = [{ role: 'user', content: 'hi' }];
  const bodies: Record<string, object> = {
    'chat.completions': { model: 'm', messages },
    embeddings: { model: 'm', input: 'hi' },
    'images.generations': { model: 'm', prompt: 'a cat' },
    responses: { model: 'm', input: 'hi' },
    messages: { model: 'm', max_tokens: 16, messages },
    'messages.count_tokens': { model: 'm', messages },
    completions: { model: 'm', prompt: 'hi' },
    moderations: { model: 'm', input: 'hi' },
    rerank: { model: 'm', query: 'q', documents: ['a', 'b'] },
    'audio.speech': { model: 'm', input: 'hi', voice: 'alloy' },
    'gemini.generate': { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    'gemini.count_tokens': { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    'gemini.embed': { content: { parts: [{ text: 'hi' }] } },
  };
  const body = bodies[api.endpoint];
  if (!body) throw new Error(`no sample request for ${api.endpoint}: add one`);
  return { raw: Buffer.from(JSON.stringify(body)), line: line() };
}

/** What the API does with a channel of the provider, in the table's words. */
async function behaviour(api: ForwardedFrontApi, provider: string): Promise<string> {
  const { raw, line } = await sample(api);
  const body = api.parse(raw, line);
  try {
    const call = api.call(body, {
      channel: {
        id: 1,
        provider,
        baseUrl: 'https://upstream.example',
        modelMapping: {},
      } as unknown as RoutedChannel,
      upstreamModel: 'm',
      secret: provider === 'bedrock' ? 'AKIAEXAMPLE:secret' : 'sk-upstream',
      settings: provider === 'bedrock' ? { region: 'us-east-1' } : {},
      clientHeaders: line.headers,
    });
    if ('local' in call) return 'counted by the edge';
    return call.request.providerPath ? 'a provider route' : 'as sent';
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'invalid_request') return 'passed over';
    throw error;
  }
}

describe('docs/providers.md, "Front APIs and providers"', () => {
  const { providers, rows } = table();

  it('has a column for every channel provider, and no other', () => {
    expect([...providers].sort()).toEqual([...CHANNEL_PROVIDERS].sort());
  });

  it('has one row for every forwarded API, naming every route of it, and no row for nothing', () => {
    for (const api of FORWARDED_APIS) {
      expect({ api: api.name, rows: rowOf(rows, api).length }).toEqual({ api: api.name, rows: 1 });
      const [row] = rowOf(rows, api);
      for (const route of api.routes)
        expect({ route: route.path, named: row!.names.some((n) => names(n, route)) }).toEqual({
          route: route.path,
          named: true,
        });
    }
    for (const row of rows)
      expect({
        row: row.names,
        apis: FORWARDED_APIS.some((api) => rowOf([row], api).length > 0),
      }).toEqual({ row: row.names, apis: true });
  });

  it('says in each cell what the API does with a channel of that provider', async () => {
    for (const api of FORWARDED_APIS) {
      const [row] = rowOf(rows, api);
      for (const provider of CHANNEL_PROVIDERS) {
        const said = row!.cells.get(provider)!;
        expect(CELLS).toContain(said);
        const done = await behaviour(api, provider);
        const where = `${api.name} on ${provider}: the table says "${said}", the code does "${done}"`;
        if (said === 'passed over' || done === 'passed over')
          expect({ where, same: said === done }).toEqual({ where, same: true });
        if (said === 'counted by the edge' || done === 'counted by the edge')
          expect({ where, same: said === done }).toEqual({ where, same: true });
        // On an openai channel "as sent" is OpenAI's own route under the base URL.
        if (provider === 'openai' && said === 'as sent')
          expect({ where, same: done === 'as sent' }).toEqual({ where, same: true });
      }
    }
  });
});
