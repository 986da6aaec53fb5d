// From v4.1.1 the chat application speaks only the OpenAI format upstream
// (docs/specification.md, "Upstream formats"); every other platform is reached through the
// gateway.

export const PLATFORMS = ['openai'] as const;
export type PlatformName = (typeof PLATFORMS)[number];

export const PLATFORM_MESSAGE =
  'platform must be "openai": only OpenAI-format upstreams are supported; put other platforms behind the gateway and use its address';

export const PURPOSES = ['chat', 'drawing', 'music'] as const;
export type PurposeName = (typeof PURPOSES)[number];

/** Model names as providers write them: `gpt-4o`, `gpt-4-all`, `org/model:tag`. */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;
