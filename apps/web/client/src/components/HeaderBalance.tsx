import { Link, useLoad } from '@switchyard/ui';
import { useEffect } from 'preact/hooks';
import * as chat from '../api/chat-api.js';

/** The user's credits in the top bar, read again whenever something changes them. */
export function HeaderBalance() {
  const balance = useLoad(chat.balance, []);
  const { reload } = balance;
  useEffect(() => {
    const again = () => void reload();
    window.addEventListener(chat.CREDITS_CHANGED, again);
    return () => window.removeEventListener(chat.CREDITS_CHANGED, again);
  }, [reload]);
  if (balance.data === undefined) return null;
  return (
    <Link href="/credits" class="header-balance">
      {balance.data.toLocaleString()} credits
    </Link>
  );
}
