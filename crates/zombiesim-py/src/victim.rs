//! Victim policies written in Python: `zs.simulate(cfg, wl, victim=fn)`.
//!
//! At each selection the core hands a GC unit's candidates over as columns
//! (`zombiesim::gc::Candidates`); `fn(candidates)` gets them as a `Candidates` object
//! of NumPy arrays and answers with a block number, or with a ranking (a sequence or
//! array of block numbers, best first) that serves the following selections too. The
//! run holds the GIL only for the call; an exception the policy raises stops the run
//! and is raised again from `simulate`.

use numpy::ToPyArray;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, OnceLock};
use zombiesim::gc::{Candidates, Chooser};

/// The candidates of one GC unit, as the Python policy sees them: each column a
/// NumPy array, built when first read.
#[pyclass(name = "Candidates", module = "zombiesim._core", frozen)]
pub struct PyCandidates {
    inner: Candidates,
    arrays: [OnceLock<Py<PyAny>>; 9],
}

impl PyCandidates {
    /// Column `i` (in the order of the getters) as an array, built once.
    fn column<'py, T: numpy::Element>(
        &self,
        py: Python<'py>,
        i: usize,
        values: &[T],
    ) -> Bound<'py, PyAny> {
        self.arrays[i]
            .get_or_init(|| values.to_pyarray(py).into_any().unbind())
            .bind(py)
            .clone()
    }
}

#[pymethods]
impl PyCandidates {
    /// Logical time now (host page writes so far).
    #[getter]
    fn now(&self) -> u64 {
        self.inner.now
    }
    /// Block numbers, ascending (reclaim units under FDP).
    #[getter]
    fn block<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 0, &self.inner.block)
    }
    /// Valid pages.
    #[getter]
    fn valid<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 1, &self.inner.valid)
    }
    /// Pages holding a dead copy.
    #[getter]
    fn invalid<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 2, &self.inner.invalid)
    }
    /// Valid pages the device knows as zombies.
    #[getter]
    fn zombies<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 3, &self.inner.zombies)
    }
    /// Logical time of the last program or invalidation.
    #[getter]
    fn last_modified<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 4, &self.inner.last_modified)
    }
    /// `now - last_modified`.
    #[getter]
    fn age<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 5, &self.inner.age)
    }
    #[getter]
    fn erase_count<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 6, &self.inner.erase_count)
    }
    /// The write stream each block was opened for.
    #[getter]
    fn stream<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 7, &self.inner.stream)
    }
    /// Popularity weight of pooled dead pages (dead-value pool; else 0).
    #[getter]
    fn weight<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.column(py, 8, &self.inner.weight)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Candidates(now={}, blocks={})",
            self.inner.now,
            self.inner.len()
        )
    }
}

/// A Python callable as a [`Chooser`]; it keeps the first exception it raised.
pub struct PyChooser {
    callable: Py<PyAny>,
    name: String,
    failure: Mutex<Option<PyErr>>,
}

impl PyChooser {
    /// `callable` as a chooser named after its `__qualname__` (else its repr).
    pub fn new(py: Python<'_>, callable: Py<PyAny>) -> PyResult<Arc<Self>> {
        let bound = callable.bind(py);
        if !bound.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "victim must be a callable taking the candidates, got {}",
                bound.get_type().name()?
            )));
        }
        let name = match bound.getattr("__qualname__") {
            Ok(n) => n.extract::<String>()?,
            Err(_) => bound.repr()?.extract::<String>()?,
        };
        Ok(Arc::new(PyChooser {
            callable,
            name,
            failure: Mutex::new(None),
        }))
    }

    /// The exception the policy raised, if it raised one.
    pub fn take_failure(&self) -> Option<PyErr> {
        self.failure.lock().expect("not poisoned").take()
    }

    fn answer(&self, py: Python<'_>, inner: Candidates) -> PyResult<Vec<u32>> {
        let candidates = Py::new(
            py,
            PyCandidates {
                inner,
                arrays: Default::default(),
            },
        )?;
        let ret = self.callable.call1(py, (candidates,))?;
        let ret = ret.bind(py);
        if let Ok(block) = ret.extract::<u32>() {
            return Ok(vec![block]);
        }
        // An array answers as a list of Python ints (a negative one is refused).
        let ret = match ret.cast::<numpy::PyUntypedArray>() {
            Ok(array) => array.call_method0("tolist")?,
            Err(_) => ret.clone(),
        };
        ret.extract::<Vec<u32>>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "victim policy {} must return a block number or a sequence of them, got {}",
                self.name,
                ret.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })
    }
}

impl Chooser for PyChooser {
    fn name(&self) -> String {
        format!("python:{}", self.name)
    }

    fn choose(&self, c: Candidates) -> Option<Vec<u32>> {
        Python::attach(|py| match self.answer(py, c) {
            Ok(ranking) => Some(ranking),
            Err(e) => {
                self.failure.lock().expect("not poisoned").get_or_insert(e);
                None
            }
        })
    }
}

/// `victim` (a Python callable, if given) as `opts`'s victim policy; the chooser is
/// returned so that [`raise_failure`] can find what it raised.
pub fn attach(
    py: Python<'_>,
    opts: &mut zombiesim::RunOptions,
    victim: Option<Py<PyAny>>,
) -> PyResult<Option<Arc<PyChooser>>> {
    let Some(callable) = victim else {
        return Ok(None);
    };
    let chooser = PyChooser::new(py, callable)?;
    opts.victim = Some(zombiesim::sim::ExternalVictim(chooser.clone()));
    Ok(Some(chooser))
}

/// The exception the run's Python victim policy raised wins over the run's result.
pub fn raise_failure<T>(chooser: Option<Arc<PyChooser>>, result: PyResult<T>) -> PyResult<T> {
    match chooser.and_then(|c| c.take_failure()) {
        Some(e) => Err(e),
        None => result,
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCandidates>()
}
