// The interpreter the python-backend tests run models with: Debian's /usr/bin/python3 (with
// python3-numpy, which .ci/run installs) when present, else `python3` on PATH.
import { existsSync } from 'node:fs';

export const TEST_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
export const PYTHON_BACKEND_CONFIG = { python: { 'python-executable': TEST_PYTHON } };
