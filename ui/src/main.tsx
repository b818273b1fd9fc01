// The console's entry: mounts the app into #app (index.html loads this bundle as a module).
import { render } from 'preact';
import { App } from './app.tsx';

const root = document.getElementById('app');
if (root) render(<App />, root);
