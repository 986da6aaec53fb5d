import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';

// Short confirmations ("Channel saved.") in one live region, gone after a few seconds.

interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'error';
}

type Notify = (text: string, kind?: Toast['kind']) => void;

const ToastContext = createContext<Notify>(() => undefined);

const SHOWN_MS = 5000;

export function ToastProvider(props: { children: ComponentChildren }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const notify = useCallback<Notify>((text, kind = 'info') => {
    const id = Date.now() + Math.random();
    setToasts((shown) => [...shown, { id, text, kind }]);
    setTimeout(() => setToasts((shown) => shown.filter((toast) => toast.id !== id)), SHOWN_MS);
  }, []);
  return (
    <ToastContext.Provider value={notify}>
      {props.children}
      <div class="toasts" role="status" aria-live="polite">
        {toasts.map((toast) => (
          <p key={toast.id} class={`toast toast-${toast.kind}`}>
            {toast.text}
          </p>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast(): Notify {
  return useContext(ToastContext);
}
