/* F11 attention lab: static twin (attention.js). */
