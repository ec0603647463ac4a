//! Policies written in Python: `zs.simulate(cfg, wl, victim=fn, placement=fn)`.
//!
//! - Victims: at each selection the core hands a GC unit's candidates over as columns
//!   (`zombiesim::gc::Candidates`); `fn(candidates)` gets them as a `Candidates` object
//!   of NumPy arrays and answers with a block number, or with a ranking (a sequence or
//!   array of block numbers, best first) that serves the following selections too.
//! - Placement (`ftl.placement = "python:K"`): every `placement_batch` host writes the
//!   core hands the batch over (`zombiesim::placement::PlacedWrites`); `fn(writes)`
//!   gets a `Writes` object of NumPy arrays and answers with one stream per write, the
//!   stream its page's next write goes to.
//!
//! The run holds the GIL only for the call; an exception a policy raises (or an answer
//! the core cannot use) stops the run at its next progress tick and is raised again
//! from `simulate`.

use numpy::ToPyArray;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use zombiesim::ftl::ExternalPolicies;
use zombiesim::gc::{Candidates, Chooser};
use zombiesim::placement::{PlacedWrites, Placer};

/// The candidates of one GC unit, as the Python policy sees them: each column a
/// NumPy array, built when first read.
#[pyclass(name = "Candidates", module = "zombiesim._core", frozen)]
pub struct PyCandidates {
    inner: Candidates,
    arrays: Columns<9>,
}

/// `N` columns of a batch as NumPy arrays, each built when first read.
struct Columns<const N: usize>([OnceLock<Py<PyAny>>; N]);

impl<const N: usize> Columns<N> {
    /// Column `i` (in the order of the getters) holding `values`.
    fn get<'py, T: numpy::Element>(
        &self,
        py: Python<'py>,
        i: usize,
        values: &[T],
    ) -> Bound<'py, PyAny> {
        self.0[i]
            .get_or_init(|| values.to_pyarray(py).into_any().unbind())
            .bind(py)
            .clone()
    }
}

impl<const N: usize> Default for Columns<N> {
    fn default() -> Self {
        Columns(std::array::from_fn(|_| OnceLock::new()))
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
        self.arrays.get(py, 0, &self.inner.block)
    }
    /// Valid pages.
    #[getter]
    fn valid<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 1, &self.inner.valid)
    }
    /// Pages holding a dead copy.
    #[getter]
    fn invalid<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 2, &self.inner.invalid)
    }
    /// Valid pages the device knows as zombies.
    #[getter]
    fn zombies<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 3, &self.inner.zombies)
    }
    /// Logical time of the last program or invalidation.
    #[getter]
    fn last_modified<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 4, &self.inner.last_modified)
    }
    /// `now - last_modified`.
    #[getter]
    fn age<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 5, &self.inner.age)
    }
    #[getter]
    fn erase_count<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 6, &self.inner.erase_count)
    }
    /// The write stream each block was opened for.
    #[getter]
    fn stream<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 7, &self.inner.stream)
    }
    /// Popularity weight of pooled dead pages (dead-value pool; else 0).
    #[getter]
    fn weight<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 8, &self.inner.weight)
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

/// A Python callable the core calls, and the first exception it raised (or the
/// core's refusal of an answer).
struct PyPolicy {
    callable: Py<PyAny>,
    name: String,
    /// What its errors call it: "victim policy" or "placement".
    role: &'static str,
    failure: Mutex<Option<PyErr>>,
    failed: Arc<AtomicBool>,
}

impl PyPolicy {
    /// `callable` (given as the argument `what`, a `role`), named after its `__name__`
    /// (else its repr).
    fn new(
        py: Python<'_>,
        callable: Py<PyAny>,
        (what, role): (&str, &'static str),
        failed: &Arc<AtomicBool>,
    ) -> PyResult<Self> {
        let bound = callable.bind(py);
        if !bound.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{what} must be a callable, got {}",
                bound.get_type().name()?
            )));
        }
        let name = match bound.getattr("__name__") {
            Ok(n) => n.extract::<String>()?,
            Err(_) => bound.repr()?.extract::<String>()?,
        };
        Ok(PyPolicy {
            callable,
            name,
            role,
            failure: Mutex::new(None),
            failed: failed.clone(),
        })
    }

    /// Keep `e` (the first failure wins) and have the run stop.
    fn fail(&self, e: PyErr) {
        self.failure.lock().expect("not poisoned").get_or_insert(e);
        self.failed.store(true, Ordering::Relaxed);
    }

    fn take_failure(&self) -> Option<PyErr> {
        self.failure.lock().expect("not poisoned").take()
    }

    /// A list of whole numbers from what the policy returned (`what` names it): one
    /// number, a sequence of them or an array.
    fn numbers(&self, ret: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u32>> {
        if let Ok(one) = ret.extract::<u32>() {
            return Ok(vec![one]);
        }
        // An array answers as a list of Python ints (a negative one is refused).
        let list = match ret.cast::<numpy::PyUntypedArray>() {
            Ok(array) => array.call_method0("tolist")?,
            Err(_) => ret.clone(),
        };
        list.extract::<Vec<u32>>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "{} {} must return {what}, got {}",
                self.role,
                self.name,
                ret.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })
    }
}

/// A Python victim policy as a [`Chooser`].
pub struct PyChooser(PyPolicy);

impl PyChooser {
    fn answer(&self, py: Python<'_>, inner: Candidates) -> PyResult<Vec<u32>> {
        let candidates = Py::new(
            py,
            PyCandidates {
                inner,
                arrays: Default::default(),
            },
        )?;
        let ret = self.0.callable.call1(py, (candidates,))?;
        self.0
            .numbers(ret.bind(py), "a block number or a sequence of them")
    }
}

impl Chooser for PyChooser {
    fn name(&self) -> String {
        format!("python:{}", self.0.name)
    }

    fn choose(&self, c: Candidates) -> Option<Vec<u32>> {
        Python::attach(|py| match self.answer(py, c) {
            Ok(ranking) => Some(ranking),
            Err(e) => {
                self.0.fail(e);
                None
            }
        })
    }
}

/// A batch of host writes, as the Python placement sees it: each column a NumPy
/// array, built when first read.
#[pyclass(name = "Writes", module = "zombiesim._core", frozen)]
pub struct PyWrites {
    inner: PlacedWrites,
    arrays: Columns<5>,
}

#[pymethods]
impl PyWrites {
    /// Logical time after the batch (host page writes so far).
    #[getter]
    fn now(&self) -> u64 {
        self.inner.now
    }
    /// The logical page of each write.
    #[getter]
    fn lpn<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 0, &self.inner.lpn)
    }
    /// Whether each write overwrote a copy on flash.
    #[getter]
    fn overwrite<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 1, &self.inner.overwrite)
    }
    /// The writer's lifetime hint (host page writes; 2**64 - 1: none).
    #[getter]
    fn lifetime<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 2, &self.inner.lifetime)
    }
    /// Logical time of each write.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 3, &self.inner.time)
    }
    /// The stream each write went to.
    #[getter]
    fn stream<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.arrays.get(py, 4, &self.inner.stream)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Writes(now={}, writes={})",
            self.inner.now,
            self.inner.len()
        )
    }
}

/// A Python placement as a [`Placer`].
pub struct PyPlacer {
    policy: PyPolicy,
    batch: usize,
}

impl PyPlacer {
    fn answer(&self, py: Python<'_>, inner: PlacedWrites) -> PyResult<Vec<u32>> {
        let writes = Py::new(
            py,
            PyWrites {
                inner,
                arrays: Default::default(),
            },
        )?;
        let ret = self.policy.callable.call1(py, (writes,))?;
        self.policy
            .numbers(ret.bind(py), "a sequence of streams, one per write")
    }
}

impl Placer for PyPlacer {
    fn name(&self) -> String {
        format!("python:{}", self.policy.name)
    }

    fn batch(&self) -> usize {
        self.batch
    }

    fn place(&self, writes: PlacedWrites) -> Option<Vec<u32>> {
        Python::attach(|py| match self.answer(py, writes) {
            Ok(streams) => Some(streams),
            Err(e) => {
                self.policy.fail(e);
                None
            }
        })
    }

    fn refuse(&self, why: String) {
        self.policy
            .fail(pyo3::exceptions::PyValueError::new_err(why));
    }
}

/// The Python policies of one run, and whether one of them failed.
pub struct PyPolicies {
    chooser: Option<Arc<PyChooser>>,
    placer: Option<Arc<PyPlacer>>,
    failed: Arc<AtomicBool>,
}

impl PyPolicies {
    /// `victim` and `placement` (Python callables, if given) for `opts`; a placement
    /// is asked every `batch` host writes.
    pub fn attach(
        py: Python<'_>,
        opts: &mut zombiesim::RunOptions,
        victim: Option<Py<PyAny>>,
        placement: Option<Py<PyAny>>,
        batch: usize,
    ) -> PyResult<Self> {
        let failed = Arc::new(AtomicBool::new(false));
        let chooser = victim
            .map(|v| {
                PyPolicy::new(py, v, ("victim", "victim policy"), &failed)
                    .map(|p| Arc::new(PyChooser(p)))
            })
            .transpose()?;
        if batch == 0 && placement.is_some() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "placement_batch must be at least 1",
            ));
        }
        let placer = placement
            .map(|p| {
                PyPolicy::new(py, p, ("placement", "placement"), &failed)
                    .map(|policy| Arc::new(PyPlacer { policy, batch }))
            })
            .transpose()?;
        opts.external = ExternalPolicies {
            victim: chooser.clone().map(|c| c as Arc<dyn Chooser>),
            placer: placer.clone().map(|p| p as Arc<dyn Placer>),
        };
        Ok(PyPolicies {
            chooser,
            placer,
            failed,
        })
    }

    /// Whether a policy failed (the run should stop).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// The exception a policy raised (the victim policy's first), if one did.
    pub fn take_failure(&self) -> Option<PyErr> {
        let chosen = self.chooser.as_ref().and_then(|c| c.0.take_failure());
        chosen.or_else(|| self.placer.as_ref().and_then(|p| p.policy.take_failure()))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCandidates>()?;
    m.add_class::<PyWrites>()
}
