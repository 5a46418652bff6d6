/** Where `npm run kiosk` connects, and whose demo tokens it reads, when told neither: `npm start`'s defaults. */
export const KIOSK_CLI_URL = 'ws://127.0.0.1:8080/v1/kiosk';
export const KIOSK_CLI_DATA_DIR = '.data/pglite';
