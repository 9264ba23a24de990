/* F11 attention lab: static twin (render.js). */
