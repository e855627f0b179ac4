pub mod neuron;
