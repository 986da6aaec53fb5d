import { type ChatModel } from '../api/types.js';

/** The custom assistants saved to the user, as entries of the model list. */
export function customModels(names: string[]): ChatModel[] {
  return names.map((name) => ({
    id: `custom:${name}`,
    name,
    purpose: 'chat',
    platform: 'openai',
    custom: true,
  }));
}

/** The model to preselect: the user's last choice while it is still offered, else the
 * first chat model (the list comes chat first), else whatever is first. */
export function initialModel(models: ChatModel[], preferred: string | null): string {
  if (preferred !== null && models.some((model) => model.name === preferred)) return preferred;
  return (models.find((model) => model.purpose === 'chat') ?? models[0])?.name ?? '';
}
