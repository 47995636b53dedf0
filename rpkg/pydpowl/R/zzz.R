# Stop the Python worker when the namespace is unloaded (the finalizer of the
# worker covers the end of the session).
.onUnload <- function(libpath) worker_stop()
