/**
 * Python 3, where Debian puts it: importing this module marks a test file as needing it
 * (test/support/requirements.ts leaves the file out, saying so, when it is missing outside CI).
 */
export const PYTHON = '/usr/bin/python3';
