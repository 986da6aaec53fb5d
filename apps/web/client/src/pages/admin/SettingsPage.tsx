import {
  FormActions,
  SelectField,
  TextField,
  fieldErrors,
  useLoad,
  useToast,
} from '@switchyard/ui';
import { useEffect, useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';

/** What was typed, as the API reads it: empty is not 0 but a value it refuses by name. */
const numberOf = (text: string): number => (text.trim() === '' ? Number.NaN : Number(text));

/** No A2A model: the agent takes no tasks. */
const NONE = '';

/**
 * The chat app's settings, stored in its database and applied at once (docs/credits.md,
 * "Settings"): the registration grant and the model that answers A2A tasks.
 */
export function SettingsPage() {
  const settings = useLoad(chat.chatSettings, []);
  const models = useLoad(chat.listAdminModels, []);
  const notify = useToast();
  const [grant, setGrant] = useState('');
  const [reward, setReward] = useState('');
  const [perAddress, setPerAddress] = useState('');
  const [a2aModel, setA2aModel] = useState(NONE);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  /** Back to what is saved. */
  const reset = () => {
    if (!settings.data) return;
    setGrant(String(settings.data.registrationGrant));
    setReward(String(settings.data.inviteReward));
    setPerAddress(String(settings.data.invitesPerAddress));
    setA2aModel(settings.data.a2aModel ?? NONE);
    setError(null);
  };
  useEffect(reset, [settings.data]);

  const chatModels = (models.data?.items ?? []).filter((model) => model.purpose === 'chat');
  const options = [
    { value: NONE, label: 'None: take no A2A tasks' },
    ...chatModels.map((model) => ({ value: model.name, label: model.name })),
  ];
  // A model set before it was deleted, or by CHAT_A2A_MODEL, is still shown as chosen.
  if (a2aModel !== NONE && !chatModels.some((model) => model.name === a2aModel)) {
    options.push({ value: a2aModel, label: `${a2aModel} (not a chat model here)` });
  }

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await chat.saveChatSettings({
        registrationGrant: numberOf(grant),
        inviteReward: numberOf(reward),
        invitesPerAddress: numberOf(perAddress),
        a2aModel: a2aModel === NONE ? null : a2aModel,
      });
      await settings.reload();
      notify('Settings saved.');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="settings-title">
      <div class="page-header">
        <h1 id="settings-title">Chat settings</h1>
      </div>
      <p class="lead">Saved in the database and applied at once, without a restart.</p>
      <ErrorNotice error={settings.error ?? models.error} />
      {settings.data && (
        <form class="card editor" onSubmit={(event) => void submit(event)} aria-label="Settings">
          <ErrorNotice error={error} />
          <h2>Credits</h2>
          <TextField
            label="Registration grant"
            type="number"
            min={0}
            required
            value={grant}
            onInput={setGrant}
            error={fields['registrationGrant']}
            hint="Credits each newly registered user receives; 0 gives none."
          />
          <TextField
            label="Invitation reward"
            type="number"
            min={0}
            required
            value={reward}
            onInput={setReward}
            error={fields['inviteReward']}
            hint="Credits the inviter and the invitee each get after the invitee's first successful reply."
          />
          <TextField
            label="Rewarded invitees per address"
            type="number"
            min={0}
            required
            value={perAddress}
            onInput={setPerAddress}
            error={fields['invitesPerAddress']}
            hint="Against self-invites: an inviter is rewarded for at most this many invitees who registered from one address."
          />
          <h2>A2A agent</h2>
          <SelectField
            label="Decision model"
            value={a2aModel}
            options={options}
            onChange={setA2aModel}
            error={fields['a2aModel']}
          />
          <p class="help">
            The chat model that answers tasks sent to this app's A2A endpoint. The user whose A2A
            key sent a task pays for it in credits, at the model's price.
          </p>
          <FormActions submit="Save settings" busy={busy} onCancel={reset} />
        </form>
      )}
    </section>
  );
}
