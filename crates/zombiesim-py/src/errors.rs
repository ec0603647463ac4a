//! Every mapping from core errors to Python exceptions, in one place.
//!
//! ```text
//! ZombiesimError (ValueError)
//!  ├─ ConfigError       a config key is unknown, mistyped or impossible
//!  ├─ WorkloadError     a workload spec is malformed
//!  ├─ InputError        a file is malformed (file:line)
//!  ├─ DeviceFullError   GC could not reclaim space
//!  ├─ OutOfRangeError   a request beyond the logical space
//!  └─ IntegrityError    the oracle or an invariant check failed (a simulator bug)
//! ```
//! Each exception carries `kind` and `exit_code` attributes for the CLI.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use zombiesim::Error;

pyo3::create_exception!(
    zombiesim._core,
    ZombiesimError,
    PyValueError,
    "Base class of zombiesim errors."
);
pyo3::create_exception!(
    zombiesim._core,
    ConfigError,
    ZombiesimError,
    "A configuration key is unknown, mistyped or impossible."
);
pyo3::create_exception!(
    zombiesim._core,
    WorkloadError,
    ZombiesimError,
    "A workload specification is malformed."
);
pyo3::create_exception!(
    zombiesim._core,
    InputError,
    ZombiesimError,
    "An input file is malformed."
);
pyo3::create_exception!(
    zombiesim._core,
    DeviceFullError,
    ZombiesimError,
    "Garbage collection could not reclaim space."
);
pyo3::create_exception!(
    zombiesim._core,
    OutOfRangeError,
    ZombiesimError,
    "A request addressed a page beyond the logical space."
);
pyo3::create_exception!(
    zombiesim._core,
    IntegrityError,
    ZombiesimError,
    "The integrity oracle or an invariant check failed."
);

/// Convert a core error into the matching Python exception.
pub fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    let py_err = match &err {
        Error::Config { .. } => ConfigError::new_err(msg),
        Error::Workload { .. } => WorkloadError::new_err(msg),
        Error::Input { .. } | Error::Io { .. } => InputError::new_err(msg),
        Error::DeviceFull { .. } => DeviceFullError::new_err(msg),
        Error::OutOfRange { .. } => OutOfRangeError::new_err(msg),
        Error::Integrity { .. } => IntegrityError::new_err(msg),
    };
    Python::attach(|py| {
        let value = py_err.value(py);
        let _ = value.setattr("kind", err.kind());
        let _ = value.setattr("exit_code", err.exit_code());
    });
    py_err
}

/// `Result` extension: `.py()?` maps a core error.
pub trait IntoPy<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for zombiesim::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Register the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ZombiesimError", py.get_type::<ZombiesimError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("DeviceFullError", py.get_type::<DeviceFullError>())?;
    m.add("OutOfRangeError", py.get_type::<OutOfRangeError>())?;
    m.add("IntegrityError", py.get_type::<IntegrityError>())?;
    Ok(())
}
