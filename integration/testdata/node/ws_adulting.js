// A call whose dialed leg a child_call_hook makes a session of its own, on
// @jambonz/node-client-ws: /parent dials; the child_call_hook (/child) comes on that
// socket as session:redirect and answers the leg's verbs; the leg's own session
// connects to the call hook's URL with /adulting appended, its first message
// session:adulting. Every event is printed as a JSON line (lib.js).
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});

makeService({path: '/parent'}).on('session:new', (session) => {
  log('parent:session', {call_sid: session.call_sid});
  session
    .on('call:status', (evt) => log('parent:call:status', {call_sid: evt.call_sid, call_status: evt.call_status,
      parent_call_sid: evt.parent_call_sid}))
    .on('/child', (data) => {
      log('parent:child', {call_sid: data.call_sid, parent_call_sid: data.parent_call_sid});
      session
        .say({text: 'You are on your own now.'})
        .gather({input: ['digits'], numDigits: 1, timeout: 5, actionHook: '/leg-gather'})
        .hangup()
        .reply();
    })
    .on('/dial-action', (data) => {
      log('parent:dial-action', data);
      session.hangup().reply();
    })
    .on('close', (code) => log('parent:close', {code}));
  session.dial({target: [{type: 'phone', number: '+15550002222'}], actionHook: '/dial-action'}).send();
});

// The SDK hands the session:adulting connection to its session:new handler.
makeService({path: '/parent/adulting'}).on('session:new', (session) => {
  log('adult:session', {call_sid: session.call_sid, parent_call_sid: session.parent_call_info?.call_sid,
    direction: session.direction});
  session
    .on('/leg-gather', (data) => {
      log('adult:leg-gather', {call_sid: data.call_sid, digits: data.digits});
      session.reply();
    })
    .on('call:status', (evt) => log('adult:call:status', {call_sid: evt.call_sid, call_status: evt.call_status,
      duration: evt.duration}))
    .on('close', (code) => log('adult:close', {code}));
  // jambonz ignores the verbs of this ack: the leg runs the child_call_hook's.
  session.say({text: 'This is ignored.'}).send();
});

listen(server);
