/* F11 attention lab: static twin (app.js). */
