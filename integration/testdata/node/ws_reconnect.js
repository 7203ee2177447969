// WebSocket app whose session:reconnect handler is exercised: the node drops the
// connection mid-call, reconnects and sends session:reconnect with the original
// session:new payload; the handler re-arms the gather's hook on the new session and
// acks, and the call finishes on the new connection.
//
// With RECONNECT_VERBS=1 the handler acks with verbs of its own: that is for a drop
// before session:new was acked, where the node starts the call with them.
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});
const svc = makeService({path: '/app'});

// armHooks installs the handlers a session of this call needs, whichever connection
// it arrived on.
const armHooks = (session, connection) => {
  session
    .on('/menu', (evt) => {
      log('hook', {hook: '/menu', connection, call_sid: session.call_sid, reason: evt.reason, digits: evt.digits});
      session
        .say({text: 'Back on the new connection. Goodbye.'})
        .hangup()
        .reply();
    })
    .on('jambonz:error', (evt) => log('jambonz:error', {connection, data: evt}))
    .on('close', (code) => log('close', {connection, code}));
};

svc.on('session:new', (session) => {
  log('session:new', {call_sid: session.call_sid});
  armHooks(session, 'first');
  session
    .say({text: 'Hello.'})
    .gather({input: ['digits'], actionHook: '/menu', numDigits: 1, say: {text: 'Press a key.'}})
    .send();
});

svc.on('session:reconnect', (session) => {
  log('session:reconnect', {call_sid: session.call_sid, from: session.from, to: session.to});
  armHooks(session, 'reconnected');
  if (process.env.RECONNECT_VERBS === '1') {
    session
      .say({text: 'Sorry, we were cut off. Goodbye.'})
      .hangup()
      .reply();
    return;
  }
  // The verbs of session:new are still running on the node: ack without new ones.
  session.reply();
});

listen(server);
