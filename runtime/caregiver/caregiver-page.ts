import type { FastifyPluginAsync } from 'fastify';
import { servePageFiles } from '../http/page-headers.ts';

const page = (file: string) => new URL(`./page/${file}`, import.meta.url);
const JS = 'text/javascript; charset=utf-8';

/**
 * The caregivers' page `/aidant`: plain files, no build step, under the same headers and CSP as the
 * kiosk. It holds no data: everything it shows comes from the API, read with the caregiver's token.
 */
export const caregiverPage: FastifyPluginAsync = async (app) => {
  await servePageFiles(app, {
    '/aidant': [page('aidant.html'), 'text/html; charset=utf-8'],
    '/aidant/aidant.js': [page('aidant.js'), JS],
    '/aidant/mood-chart.js': [page('mood-chart.js'), JS],
    '/aidant/mood-alerts.js': [page('mood-alerts.js'), JS],
    '/aidant/words.js': [page('words.js'), JS],
  });
};
