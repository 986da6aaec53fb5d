import { useState } from 'preact/hooks';

// Light or dark: the system's choice until the person picks one, remembered in this browser.

type Theme = 'system' | 'light' | 'dark';
const STORAGE_KEY = 'switchyard.theme';

function stored(): Theme {
  const value = localStorage.getItem(STORAGE_KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

function apply(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** Call once before the first render, so the page never flashes the other theme. */
export function applyStoredTheme(): void {
  apply(stored());
}

export function ThemeSelect() {
  const [theme, setTheme] = useState<Theme>(stored);
  return (
    <label class="theme-select">
      Theme
      <select
        value={theme}
        onChange={(event) => {
          const next = event.currentTarget.value as Theme;
          if (next === 'system') localStorage.removeItem(STORAGE_KEY);
          else localStorage.setItem(STORAGE_KEY, next);
          apply(next);
          setTheme(next);
        }}
      >
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}
