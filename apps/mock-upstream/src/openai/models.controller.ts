import { Controller, Get, Headers } from '@nestjs/common';
import type { ModelList } from '@switchyard/contracts';

/** The models the mock says it has; it answers for any model name it is asked for. */
export const MOCK_MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4-all',
  'gpt-3.5-turbo',
  'text-embedding-3-small',
  'dall-e-3',
  'suno-v3',
];

/** The Claude models the mock lists when asked in Anthropic's way. */
export const MOCK_ANTHROPIC_MODELS = ['claude-sonnet-4-5-20250929', 'claude-3-5-haiku-20241022'];

/** Anthropic's model list (https://docs.anthropic.com/en/api/models-list): one page. */
interface AnthropicModelList {
  data: { type: 'model'; id: string; display_name: string; created_at: string }[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

@Controller('v1/models')
export class ModelsController {
  /** OpenAI's list; Anthropic's when the request carries `anthropic-version`, as Anthropic's SDK sends it. */
  @Get()
  list(@Headers('anthropic-version') anthropicVersion?: string): ModelList | AnthropicModelList {
    if (anthropicVersion)
      return {
        data: MOCK_ANTHROPIC_MODELS.map((id) => ({
          type: 'model',
          id,
          display_name: id,
          created_at: '2025-09-29T00:00:00Z',
        })),
        has_more: false,
        first_id: MOCK_ANTHROPIC_MODELS[0]!,
        last_id: MOCK_ANTHROPIC_MODELS.at(-1)!,
      };
    const models: ModelList = {
      object: 'list',
      data: MOCK_MODELS.map((id) => ({
        id,
        object: 'model',
        created: 1_700_000_000,
        owned_by: 'mock-upstream',
      })),
    };
    return models;
  }
}
