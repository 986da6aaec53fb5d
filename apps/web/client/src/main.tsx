import { render } from 'preact';
import '@switchyard/ui/styles.css';
import 'uplot/dist/uPlot.min.css';
import { App } from './App.js';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
