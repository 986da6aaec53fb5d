import { useEffect, useMemo, useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type Conversation, type Preferences } from '../../api/types.js';
import { customModels, initialModel } from '../../components/model-choice.js';
import { useLoad } from '@switchyard/ui';

/**
 * The models the user may chat with (their custom assistants too) and the one chosen: the
 * user's last choice at first, the conversation's own when one opens.
 */
export function useModelChoice(active: Conversation | undefined) {
  const available = useLoad(chat.listModels, []);
  const preferences = useLoad(chat.preferences, []);
  const models = useMemo(() => {
    const listed = available.data ?? [];
    const custom = customModels(preferences.data?.customAssistants ?? []);
    return [...listed, ...custom.filter((c) => !listed.some((m) => m.name === c.name))];
  }, [available.data, preferences.data]);
  const [model, setModel] = useState('');

  // Preselect once both the models and the user's last choice are known (a failed
  // preferences load still lets the user chat, with the first chat model).
  useEffect(() => {
    if (model !== '' || available.loading || preferences.loading) return;
    setModel(initialModel(models, preferences.data?.model ?? null));
  }, [models, available.loading, preferences.loading]);
  useEffect(() => {
    if (active?.model) setModel(active.model);
  }, [active?.id]);

  const choose = (name: string) => {
    setModel(name);
    // Remembering the choice is a convenience: a failure must not stop the chat.
    chat.chooseModel(name).catch(() => undefined);
  };

  /** A custom assistant was saved from its link: it becomes the choice. */
  const customAdded = (saved: Preferences) => {
    void preferences.reload();
    if (saved.model) setModel(saved.model);
  };

  const chosen = models.find((m) => m.name === model);
  return { available, models, model, chosen, choose, customAdded };
}
