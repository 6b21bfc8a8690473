// Drives "splitdbg dap" servers with the DebugClient of
// @vscode/debugadapter-testsupport, the client VS Code's debug adapters
// are tested with. Run by TestNodeDebugClient (adapter/dap):
//
//   node dap.test.js CASES.json
//
// where CASES.json lists {port, program, path, line, fn}: a server
// listening on port, a split binary, the source path and cold line to
// break on, and the logical function frame 0 must be named by.
'use strict';
const fs = require('fs');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

// The DebugClient has no timeouts of its own: every wait is time-boxed.
function within(ms, what, p) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
  ]);
}

async function run(c) {
  const dc = new DebugClient('node', 'unused', 'go');
  await within(10000, 'connect', dc.start(c.port));
  try {
    // hitBreakpoint initializes, launches, sets the breakpoint on the
    // initialized event, sends configurationDone and asserts the stop
    // (reason "breakpoint", frame 0 at path:line).
    await within(60000, 'hitBreakpoint', dc.hitBreakpoint(
      { mode: 'exec', program: c.program, args: ['cold'] },
      { path: c.path, line: c.line }));
    const threads = await within(10000, 'threads', dc.threadsRequest());
    const thread = threads.body.threads.find((t) => t.name.startsWith('* ')) || threads.body.threads[0];
    const st = await within(10000, 'stackTrace', dc.stackTraceRequest({ threadId: thread.id, levels: 20 }));
    const f0 = st.body.stackFrames[0];
    if (f0.name !== c.fn) throw new Error(`frame 0 is ${f0.name}, want ${c.fn}`);
    for (const f of st.body.stackFrames) {
      if (f.source && /\.cold|__part/.test(f.name)) throw new Error(`frame named by a fragment: ${f.name}`);
    }
    if (c.vars) {
      const scopes = await within(10000, 'scopes', dc.scopesRequest({ frameId: f0.id }));
      const vars = await within(10000, 'variables', dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference }));
      if (vars.body.variables.length === 0) throw new Error('no variables in the moved frame');
    }
    const dis = await within(10000, 'disassemble', dc.disassembleRequest({ memoryReference: f0.instructionPointerReference, instructionOffset: 0, instructionCount: 8 }));
    if (dis.body.instructions[0].address !== f0.instructionPointerReference) throw new Error(`disassembly starts at ${dis.body.instructions[0].address}`);
    // Run on to the end, past further stops on the line.
    const terminated = dc.waitForEvent('terminated', 60000);
    dc.on('stopped', (e) => { dc.continueRequest({ threadId: e.body.threadId }).catch(() => {}); });
    await within(10000, 'continue', dc.continueRequest({ threadId: thread.id }));
    await terminated;
    return `${f0.name} at ${f0.source.path}:${f0.line}`;
  } finally {
    // stop() would send a second disconnect, which a server that has
    // ended its session never answers.
    await within(10000, 'disconnect', dc.disconnectRequest({})).catch(() => {});
    dc.stopAdapter();
  }
}

const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let reported = 0;
// A promise nobody settles lets node exit early and quietly: say so.
process.on('exit', () => {
  if (reported < cases.length) {
    console.log(`FAIL: ${cases.length - reported} case(s) never finished`);
    process.exitCode = 1;
  }
});

(async () => {
  let failed = 0;
  for (const c of cases) {
    try {
      console.log(`ok   ${c.name}: ${await run(c)}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${c.name}: ${e.message}`);
    }
    reported++;
  }
  process.exitCode = failed ? 1 : 0;
})();
