import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/** The project's own lint config, loaded once for the file. */
const eslint = new ESLint({ cwd: process.cwd() });

/** The project's own lint config, applied to code planted at a path inside a layer (no file is written). */
async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the layering rule: dependencies point inward (runtime → adapters → machines)', () => {
  it('fails machines/ importing an adapter, the runtime, an SDK, a driver or Node I/O — type imports included', async () => {
    const planted = [
      "import type { Config } from '../../runtime/config.ts';",
      "import { SemanticCache } from '../../adapters/semantic-cache/semantic-cache.ts';",
      "import pg from 'pg';",
      "import { Mistral } from '@mistralai/mistralai';",
      "import { readFile } from 'node:fs/promises';",
    ];
    for (const line of planted) {
      expect(await restrictedImports('machines/voice/planted.ts', `${line}\nexport {};\n`), line).toHaveLength(1);
    }
  });

  it('admits machines/ importing another machines room, xstate and zod', async () => {
    const code = "import { setup } from 'xstate';\nimport { z } from 'zod';\nimport type { Flux } from '../session/ports.ts';\nexport type F = Flux;\nexport const s = [setup, z];\n";
    expect(await restrictedImports('machines/voice/planted.ts', code)).toEqual([]);
  });

  it('fails adapters/ importing the runtime, and admits adapters/ importing machines/ and an SDK', async () => {
    expect(await restrictedImports('adapters/voice/planted.ts', "import { loadConfig } from '../../runtime/config.ts';\nexport const c = loadConfig;\n")).toHaveLength(1);
    const inward = "import { Mistral } from '@mistralai/mistralai';\nimport type { SpeakerPort } from '../../machines/voice/voice.port.ts';\nexport type S = SpeakerPort;\nexport const m = Mistral;\n";
    expect(await restrictedImports('adapters/voice/planted.ts', inward)).toEqual([]);
  });

  it('fails @kohami/kiosk-client importing the repository or a package, and admits its own files and node: modules', async () => {
    for (const line of ["import { ERROR_CODES } from '../../../runtime/protocol/server-frames.ts';", "import { FLUXES } from '../../../machines/session/ports.ts';", "import WebSocket from 'ws';"]) {
      expect(await restrictedImports('packages/kiosk-client/src/planted.ts', `${line}\nexport {};\n`), line).toHaveLength(1);
    }
    const own = "import { KioskError } from './errors.ts';\nimport { readFile } from 'node:fs/promises';\nexport const k = [KioskError, readFile];\n";
    expect(await restrictedImports('packages/kiosk-client/src/browser/planted.ts', own.replace('./errors.ts', '../errors.ts'))).toEqual([]);
  });

  it('holds on the tree as it is: no file of machines/, adapters/ or packages/ breaks it', async () => {
    const results = await new ESLint({ cwd: process.cwd() }).lintFiles(['machines', 'adapters', 'packages']);
    const broken = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `${r.filePath}: ${m.message}`));
    expect(broken).toEqual([]);
  });
});
