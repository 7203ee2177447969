// jambonz's v10-examples examples/dial/outbound/src/index.ts (github.com/jambonz/v10-examples,
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
    .on('/collect-digits', (evt) => {
      const digits = evt.digits;
      log.info({ digits, reason: evt.reason }, 'gather result');

      if (evt.reason !== 'dtmfDetected' || !digits) {
        session
          .say({ text: 'I did not receive any digits. Please try again.' })
          .gather({
            input: ['digits'],
            finishOnKey: '#',
            actionHook: '/collect-digits',
            say: { text: 'Please enter the phone number you would like to call, followed by the pound key.' },
          })
          .reply();
        return;
      }

      log.info({ digits }, 'dialing number');

      session
        .say({ text: `Dialing ${digits.split('').join(' ')}.` })
        .dial({
          callerId: session.from,
          target: [{ type: 'phone', number: `+${digits}` }],
          actionHook: '/dial-complete',
          timeout: 30,
        })
        .reply();
    })
    .on('/dial-complete', (evt) => {
      log.info({ dialStatus: evt.dial_call_status }, 'dial complete');

      const status = evt.dial_call_status;
      if (status === 'completed') {
        session
          .say({ text: 'The call has ended. Goodbye.' })
          .hangup()
          .reply();
      } else {
        session
          .say({ text: `The call could not be completed. The status was ${status}.` })
          .hangup()
          .reply();
      }
    });

  session
    .pause({ length: 1 })
    .gather({
      input: ['digits'],
      finishOnKey: '#',
      actionHook: '/collect-digits',
      say: { text: 'Please enter the phone number you would like to call, followed by the pound key.' },
    })
    .send();
});

logger.info({ port }, 'jambonz dial/outbound example listening');
server.on('listening', () => log('ready', {port: server.address().port}));
process.on('SIGTERM', () => process.exit(0));
