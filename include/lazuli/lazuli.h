// lazuli: a lazy tracing graph compiler. Include this header and nothing else.
#pragma once

#include "lazuli/autodiff.h"
#include "lazuli/cuda_interop.h"
#include "lazuli/data.h"
#include "lazuli/device.h"
#include "lazuli/dist.h"
#include "lazuli/dtype.h"
#include "lazuli/error.h"
#include "lazuli/inspect.h"
#include "lazuli/nn.h"
#include "lazuli/npy.h"
#include "lazuli/optim.h"
#include "lazuli/settings.h"
#include "lazuli/stats.h"
#include "lazuli/tensor.h"
