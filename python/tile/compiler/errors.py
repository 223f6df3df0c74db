"""Diagnostics of the frontend, reported as ``file:line: error: message``."""


class TileTypeError(Exception):
    """A semantic error raised where no source location is at hand; the code
    generator attaches the location of the node being compiled."""


class CompilationError(Exception):
    """An error in the user's program, located in the user's source."""

    def __init__(self, filename, line, message, notes=(), source_line=None):
        super().__init__(message)
        self.filename = filename
        self.line = line
        self.message = message
        self.notes = list(notes)
        self.source_line = source_line

    def __str__(self):
        text = f"{self.filename}:{self.line}: error: {self.message}"
        if self.source_line is not None and self.source_line.strip():
            text += "\n    " + self.source_line.strip()
        for note in self.notes:
            text += "\n" + note
        return text


class UsageError(Exception):
    """A mistake on the command line or in the compile request."""

    def __str__(self):
        return f"error: {self.args[0]}"


class BackendError(Exception):
    """tile-compile failed: its own messages (located in the tile IR, or
    naming ptxas's complaint) say why."""

    def __str__(self):
        return self.args[0]
