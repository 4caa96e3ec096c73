/* The tycheon site's plotly.js: plotly.js's own src/core.js (v4.1.1) with the same API, locales and
   exports, registering only what the site's charts use (benchmarks/render/charts.py):
   - traces: scatter (CD diagram, cost-accuracy, bump charts) and bar (replay chart) = charts.TRACE_TYPES;
   - components: legend, fx (hover), modebar, colorscale and colorbar (scatter markers' colour attributes),
     selections (the modebar's box/lasso select; its code is already pulled in by the cartesian axes) and
     shapes (the legend reads layout.shapes on every draw).
   Left out, and refused at render time by benchmarks/render/bundle.py::check_figure, which reads the
   bundle's own plot schema: annotations, annotations3d, images, updatemenus, sliders, rangeslider,
   rangeselector, grid, errorbars, the calendars component, and every trace type but these two. */
'use strict';

exports.version = require('plotly.js/src/version').version;

// inject promise polyfill
require('native-promise-only');

// inject plot css
require('plotly.js/build/plotcss');

// include registry module and expose register method
var Registry = require('plotly.js/src/registry');
var register = (exports.register = Registry.register);

// expose plot api methods
var plotApi = require('plotly.js/src/plot_api');
var methodNames = Object.keys(plotApi);
for (var i = 0; i < methodNames.length; i++) {
    var name = methodNames[i];
    // _ -> private API methods, but still registered for internal use
    if (name.charAt(0) !== '_') exports[name] = plotApi[name];
    register({ moduleType: 'apiMethod', name: name, fn: plotApi[name] });
}

// traces
register(require('plotly.js/src/traces/scatter'));
register(require('plotly.js/src/traces/bar'));

// components, in core.js's order (legend after shapes; fx after legend)
register([
    require('plotly.js/src/components/selections'),
    require('plotly.js/src/components/shapes'),
    require('plotly.js/src/components/colorscale'),
    require('plotly.js/src/components/colorbar'),
    require('plotly.js/src/components/legend'),
    require('plotly.js/src/components/fx'),
    require('plotly.js/src/components/modebar')
]);

// locales en and en-US are required for default behavior
register([require('plotly.js/src/locale-en'), require('plotly.js/src/locale-en-us')]);

// locales that are present in the window should be loaded
if (window.PlotlyLocales && Array.isArray(window.PlotlyLocales)) {
    register(window.PlotlyLocales);
    delete window.PlotlyLocales;
}

// plot icons
exports.Icons = require('plotly.js/src/fonts/ploticon');

// unofficial 'beta' plot methods, as in core.js
var Fx = require('plotly.js/src/components/fx');
var Plots = require('plotly.js/src/plots/plots');

exports.Plots = {
    resize: Plots.resize,
    graphJson: Plots.graphJson,
    sendDataToCloud: Plots.sendDataToCloud
};
exports.Fx = {
    hover: Fx.hover,
    unhover: Fx.unhover,
    loneHover: Fx.loneHover,
    loneUnhover: Fx.loneUnhover
};
exports.Snapshot = require('plotly.js/src/snapshot');
exports.PlotSchema = require('plotly.js/src/plot_api/plot_schema');
