import { useLoad } from '@switchyard/ui';
import { api, call } from '../api/client.js';

/**
 * The teams as select options, the first entry standing for "no team" (`''`). Reads one page
 * of 100 (the admin lists' largest), like the token and channel selects of the Usage page.
 */
export function useTeamOptions(none: string): { value: string; label: string }[] {
  const teams = useLoad(
    () => call(api.GET('/api/teams', { params: { query: { pageSize: 100 } } })),
    [],
  );
  return [
    { value: '', label: none },
    ...(teams.data?.items ?? []).map((team) => ({ value: String(team.id), label: team.name })),
  ];
}
