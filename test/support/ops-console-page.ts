import { chromium, type Browser, type Page, type WebSocket as PageSocket } from 'playwright-core';
import type { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';

/** Debian's Chromium (`apt-get install -y chromium`; `npm test` installs it when missing). */
const CHROMIUM = '/usr/bin/chromium';

/** The operator console's browser: headless Chromium, no media. */
export function launchConsoleBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The width the console must fit (the laptop screen). */
export const CONSOLE_VIEWPORT = { width: 1280, height: 800 } as const;

/** A page on `/ops`, connected with `token` (status « en direct »). */
export async function openConsole(browser: Browser, url: string, token: string): Promise<Page> {
  const page = await browser.newPage({ viewport: CONSOLE_VIEWPORT });
  await page.goto(`${url}/ops`);
  await page.fill('#token', token);
  await page.click('#connect');
  await page.waitForSelector('#status.ok');
  return page;
}

/** Every text frame the page receives on its operator streams (set before it connects). */
export function recordOpsFrames(page: Page): string[] {
  const frames: string[] = [];
  page.on('websocket', (socket: PageSocket) => socket.on('framereceived', ({ payload }) => frames.push(typeof payload === 'string' ? payload : payload.toString())));
  return frames;
}

/** Seniors registered under `names`, each with a kiosk token: `[{seniorId, name, token}]`. */
export async function namedSeniors(directory: SeniorDirectory, names: string[]): Promise<Array<{ seniorId: string; name: string; token: string }>> {
  return Promise.all(
    names.map(async (name, i) => {
      const seniorId = await directory.createSenior({ displayName: name, onboardingDone: true });
      const token = `kiosk_console_${i}_${seniorId.slice(0, 8)}`;
      await directory.addDevice(seniorId, token);
      return { seniorId, name, token };
    }),
  );
}

/**
 * Whether the console fits its viewport: the table's box (nothing scrolled sideways), every header, and
 * each visible row's « Fermer », inside the table's section and the window. Returns what does not.
 */
export function layoutFaults(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const faults: string[] = [];
    const section = document.querySelector('main > section')!;
    const box = section.getBoundingClientRect();
    const right = Math.min(box.right, window.innerWidth);
    if (section.scrollWidth > section.clientWidth) faults.push(`table scrolls sideways: ${section.scrollWidth} > ${section.clientWidth} px`);
    if (document.documentElement.scrollWidth > window.innerWidth) faults.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${window.innerWidth} px`);
    for (const th of document.querySelectorAll('thead th')) if (th.getBoundingClientRect().right > right + 0.5) faults.push(`header « ${th.textContent} » cut`);
    for (const button of document.querySelectorAll<HTMLElement>('tbody tr:not([hidden]) button.close')) {
      const b = button.getBoundingClientRect();
      if (b.left < box.left || b.right > right + 0.5) faults.push(`« Fermer » of ${button.closest('tr')!.dataset.session} out of view (${b.left}–${b.right} px)`);
    }
    const aside = document.querySelector('aside')!.getBoundingClientRect();
    if (aside.right > window.innerWidth + 0.5) faults.push(`detail panel cut (${aside.right} px)`);
    return faults;
  });
}
