import { Controller, Get } from '@nestjs/common';
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

@Controller('v1/models')
export class ModelsController {
  @Get()
  list(): ModelList {
    return {
      object: 'list',
      data: MOCK_MODELS.map((id) => ({
        id,
        object: 'model',
        created: 1_700_000_000,
        owned_by: 'mock-upstream',
      })),
    };
  }
}
