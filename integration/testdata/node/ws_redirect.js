// WebSocket app that sends a redirect command with queueCommand: true. It sends the
// command from the gather's actionHook handler, before acking the hook, so the node
// receives it while verbs of the first document are still queued: appending keeps
// them ("Second") ahead of the queued ones, replacing would drop them.
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});
const svc = makeService({path: '/app'});

svc.on('session:new', (session) => {
  log('session:new', {call_sid: session.call_sid});
  session
    .on('/menu', (evt) => {
      log('hook', {hook: '/menu', reason: evt.reason, digits: evt.digits});
      // session.send() after the session is acked, with execImmediate false, is the
      // SDK's way to send {"type":"command","command":"redirect","queueCommand":true}.
      session
        .say({text: 'Queued.'})
        .hangup()
        .send({execImmediate: false});
      log('command-sent', {command: 'redirect', queueCommand: true});
      session.reply();
    })
    .on('jambonz:error', (evt) => log('jambonz:error', {data: evt}))
    .on('close', (code) => log('close', {code}));

  session
    .say({text: 'First.'})
    .gather({input: ['digits'], actionHook: '/menu', numDigits: 1})
    .say({text: 'Second.'})
    .send();
});

listen(server);
