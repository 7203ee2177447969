// jambonz's v10-examples examples/gather/dtmf-menu/src/index.ts (github.com/jambonz/v10-examples,
// MIT: LICENSE.md), as its authors wrote it, with the TypeScript annotations taken out
// and its imports written as require (Node runs it without tsx, and ES modules ignore
// the NODE_PATH the tests install the SDKs on), and lines for the test: pino writes to
// stderr, the app listens on the port the kernel picks when the test gives PORT=0,
// and prints its ready line (../lib.js's convention).
'use strict';
const {log} = require('../lib');
const http = require('node:http');
const pino = require('pino');
const { createEndpoint } = require('@jambonz/sdk/websocket');

const logger = pino({ level: process.env.LOG_LEVEL || 'info' }, pino.destination(2));
const port = parseInt(process.env.PORT || '3000', 10);

const server = http.createServer();
const makeService = createEndpoint({ server, port });
if (port === 0) server.listen(0); // test line: the SDK listens only on a port it is given
const svc = makeService({ path: '/' });

svc.on('session:new', (session) => {
  const log = logger.child({ call_sid: session.callSid });
  log.info({ from: session.from, to: session.to }, 'new call');

  session
    .on('close', (code) => {
      log.info({ code }, 'session closed');
    })
    .on('error', (err) => {
      log.error(err, 'session error');
    })
    .on('/menu-selection', (evt) => {
      const digits = evt.digits;
      log.info({ digits, reason: evt.reason }, 'menu selection');

      let department;
      if (digits === '1') department = 'sales';
      else if (digits === '2') department = 'support';
      else if (digits === '3') department = 'billing';

      if (department) {
        session
          .say({ text: `You selected ${department}. Thank you for calling. Goodbye.` })
          .hangup()
          .reply();
      } else if (evt.reason === 'timeout') {
        session
          .say({ text: 'We did not receive any input. Goodbye.' })
          .hangup()
          .reply();
      } else {
        session
          .say({ text: 'Sorry, that is not a valid option.' })
          .gather({
            input: ['digits'],
            numDigits: 1,
            timeout: 10,
            actionHook: '/menu-selection',
            say: {
              text: 'Press 1 for sales. Press 2 for support. Press 3 for billing.',
            },
          })
          .reply();
      }
    });

  session
    .pause({ length: 1 })
    .gather({
      input: ['digits'],
      numDigits: 1,
      timeout: 10,
      actionHook: '/menu-selection',
      say: {
        text: 'Welcome to Acme Corp. Press 1 for sales. Press 2 for support. Press 3 for billing.',
      },
    })
    .send();
});

logger.info({ port }, 'jambonz gather/dtmf-menu example listening');
server.on('listening', () => log('ready', {port: server.address().port}));
process.on('SIGTERM', () => process.exit(0));
