import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { type Schemas } from './api/client.js';

/** The signed-in administrator, for pages that shape themselves by role. */
export const MeContext = createContext<Schemas['AdminProfile'] | null>(null);

export function useMe(): Schemas['AdminProfile'] {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside a signed-in page');
  return me;
}

/** Viewers read; owners and admins change things. */
export function useCanEdit(): boolean {
  return useMe().role !== 'viewer';
}
