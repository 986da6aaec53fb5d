import { applyStoredTheme } from '@switchyard/ui';
import { render } from 'preact';
import '@switchyard/ui/styles.css';
import 'uplot/dist/uPlot.min.css';
import { App } from './App.js';
import './styles.css';

applyStoredTheme();
const root = document.getElementById('app');
if (root) render(<App />, root);
