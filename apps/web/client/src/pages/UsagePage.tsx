import * as chat from '../api/chat-api.js';
import { DetailsView } from '../components/DetailsView.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { useLoad } from '@switchyard/ui';

export function UsagePage() {
  const usage = useLoad(chat.usage, []);
  return (
    <main id="main" class="page" aria-busy={usage.loading}>
      <h1>Your usage</h1>
      <ErrorNotice error={usage.error} />
      {usage.data && <DetailsView details={usage.data} label="Usage totals" />}
    </main>
  );
}
